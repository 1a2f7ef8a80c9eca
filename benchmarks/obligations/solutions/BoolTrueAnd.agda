module BoolTrueAnd where

open import Data.Bool using (Bool; true; false; not; _∧_; _∨_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

true-and : ∀ (b : Bool) → true ∧ b ≡ b
true-and b = refl
