module Nat-plus-comm where

open import Relation.Binary.PropositionalEquality using (_≡_; refl)
open import Data.Nat using (ℕ; _+_)
import Data.Nat.Properties

+-comm : ∀ (m n : ℕ) → m + n ≡ n + m
+-comm m n = {! !}
