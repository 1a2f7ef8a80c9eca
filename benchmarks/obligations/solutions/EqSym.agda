module EqSym where

open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

sym′ : ∀ {A : Set} {x y : A} → x ≡ y → y ≡ x
sym′ p = sym p
