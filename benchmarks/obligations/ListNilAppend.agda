module ListNilAppend where

open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

nil-append : ∀ {A : Set} (xs : List A) → [] ++ xs ≡ xs
nil-append xs = {! !}
