module NatSucInjective where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (suc-injective)

suc-inj : ∀ {m n : ℕ} → suc m ≡ suc n → m ≡ n
suc-inj p = suc-injective p
