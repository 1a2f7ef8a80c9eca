module CanaryNotId where

open import Data.Bool using (Bool; true; false; not; _∧_; _∨_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Bool.Properties using (not-involutive)

not-id : ∀ (b : Bool) → not b ≡ b
not-id b = {! !}
