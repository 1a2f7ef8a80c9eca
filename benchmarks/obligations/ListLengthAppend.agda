module ListLengthAppend where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.List.Properties using (length-++)

length-append : ∀ {A : Set} (xs ys : List A) → length (xs ++ ys) ≡ length xs + length ys
length-append xs ys = {! !}
