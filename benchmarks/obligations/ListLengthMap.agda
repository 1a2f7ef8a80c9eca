module ListLengthMap where

open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

length-map′ : ∀ {A B : Set} (f : A → B) (xs : List A) → length (map f xs) ≡ length xs
length-map′ f xs = {! !}
