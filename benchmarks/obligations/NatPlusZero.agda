module NatPlusZero where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (+-identityʳ)

plus-zero : ∀ (n : ℕ) → n + 0 ≡ n
plus-zero n = {! !}
