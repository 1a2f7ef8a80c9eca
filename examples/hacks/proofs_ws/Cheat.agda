module Cheat where

open import Agda.Builtin.Nat
open import Agda.Builtin.Equality

-- A false statement "proved" by assuming it from a term position.
wrong : 1 + 1 ≡ 3
wrong = let postulate cheat : 1 + 1 ≡ 3 in cheat
