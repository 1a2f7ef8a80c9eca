module NatRetrieveSuc where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
import Data.Nat.Properties as P

plus-suc′ : ∀ (m n : ℕ) → m + suc n ≡ suc (m + n)
plus-suc′ m n = {! !}
