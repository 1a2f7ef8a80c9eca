module Plus where

open import Agda.Builtin.Nat
open import Agda.Builtin.Equality

one-plus-one : 1 + 1 ≡ 2
one-plus-one = {! !}
