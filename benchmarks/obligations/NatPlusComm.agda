module NatPlusComm where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (+-comm)

plus-comm : ∀ (m n : ℕ) → m + n ≡ n + m
plus-comm m n = {! !}
