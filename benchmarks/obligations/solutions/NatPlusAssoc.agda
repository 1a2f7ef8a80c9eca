module NatPlusAssoc where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (+-assoc)

plus-assoc : ∀ (m n p : ℕ) → (m + n) + p ≡ m + (n + p)
plus-assoc m n p = +-assoc m n p
