module NatTwoHoles where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Product using (_×_; _,_)
open import Data.Nat.Properties using (+-comm; +-identityʳ)

both : ∀ (m n : ℕ) → (m + n ≡ n + m) × (m + 0 ≡ m)
both m n = +-comm m n , +-identityʳ m
