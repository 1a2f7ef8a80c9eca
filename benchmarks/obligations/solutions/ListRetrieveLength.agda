module ListRetrieveLength where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
import Data.List.Properties as L

length-app : ∀ {A : Set} (xs ys : List A) → length (xs ++ ys) ≡ length xs + length ys
length-app [] ys = refl
length-app (x ∷ xs) ys = cong suc (length-app xs ys)
