module BoolAndTrue where

open import Data.Bool using (Bool; true; false; not; _∧_; _∨_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

and-true : ∀ (b : Bool) → b ∧ true ≡ b
and-true b = {! !}
