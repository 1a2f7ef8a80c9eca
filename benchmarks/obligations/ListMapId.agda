module ListMapId where

open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

map-identity : ∀ {A : Set} (xs : List A) → map (λ x → x) xs ≡ xs
map-identity xs = {! !}
