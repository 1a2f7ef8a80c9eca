module ListAppendNil where

open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.List.Properties using (++-identityʳ)

append-nil : ∀ {A : Set} (xs : List A) → xs ++ [] ≡ xs
append-nil xs = ++-identityʳ xs
