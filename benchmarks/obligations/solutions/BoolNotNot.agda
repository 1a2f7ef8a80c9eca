module BoolNotNot where

open import Data.Bool using (Bool; true; false; not; _∧_; _∨_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Bool.Properties using (not-involutive)

not-not : ∀ (b : Bool) → not (not b) ≡ b
not-not b = not-involutive b
