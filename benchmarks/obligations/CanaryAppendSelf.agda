module CanaryAppendSelf where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Data.List using (List; []; _∷_; _++_; length; map; reverse)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.List.Properties using (++-identityʳ)

append-self : ∀ (xs : List ℕ) → xs ++ xs ≡ xs
append-self xs = {! !}
