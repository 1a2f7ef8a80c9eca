module EqTrans where

open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

trans′ : ∀ {A : Set} {x y z : A} → x ≡ y → y ≡ z → x ≡ z
trans′ p q = {! !}
