module NatZeroPlus where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

zero-plus : ∀ (n : ℕ) → 0 + n ≡ n
zero-plus n = {! !}
