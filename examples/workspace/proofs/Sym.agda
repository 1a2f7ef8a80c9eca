module Sym where

open import Agda.Builtin.Equality

sym : {A : Set} {x y : A} → x ≡ y → y ≡ x
sym refl = refl
