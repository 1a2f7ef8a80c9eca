module EqChain where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open Relation.Binary.PropositionalEquality.≡-Reasoning
open import Data.Nat.Properties using (+-comm; +-assoc)

swap-middle : ∀ (m n p : ℕ) → m + (n + p) ≡ n + (m + p)
swap-middle m n p = {! !}
