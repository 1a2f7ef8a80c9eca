module NatTimesZero where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

times-zero : ∀ (n : ℕ) → n * 0 ≡ 0
times-zero n = {! !}
