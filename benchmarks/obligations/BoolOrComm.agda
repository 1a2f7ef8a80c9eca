module BoolOrComm where

open import Data.Bool using (Bool; true; false; not; _∧_; _∨_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Bool.Properties using (∨-comm)

or-comm : ∀ (a b : Bool) → a ∨ b ≡ b ∨ a
or-comm a b = {! !}
