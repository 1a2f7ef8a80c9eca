module ListReverseInvolutive where

open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.List.Properties using (reverse-involutive)

reverse-reverse : ∀ {A : Set} (xs : List A) → reverse (reverse xs) ≡ xs
reverse-reverse xs = reverse-involutive xs
