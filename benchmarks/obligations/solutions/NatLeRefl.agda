module NatLeRefl where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (≤-refl)

le-refl : ∀ (n : ℕ) → n ≤ n
le-refl n = ≤-refl
