module CanaryMinusComm where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat using (_∸_)
open import Data.Nat.Properties using (+-comm; *-comm)

minus-comm : ∀ (m n : ℕ) → m ∸ n ≡ n ∸ m
minus-comm m n = {! !}
