module Positivity where

open import Agda.Builtin.Nat
open import Agda.Builtin.Equality

-- A false statement "proved" through a hole in Agda's positivity checker (agda/agda#8564):
-- `P` is defined point-free in FixP's mutual group, so the negative occurrence of FixP in
-- `wrap`'s argument is not seen and FixP yields ⊥. Both Agdas assay runs accept this file
-- under --safe; assay refuses a data declaration in a solution before judging.
data ⊥ : Set where

data ⊤ : Set where
  tt : ⊤

⊤-rec : ∀ {ℓ} {A : Set ℓ} → ⊤ → A → A
⊤-rec tt x = x

Negate : (x : ⊤) → ⊤-rec x (Set → Set)
Negate tt X = (X → ⊥)

P : (x : ⊤) → ⊤-rec x (Set → Set)
data FixP : Set
P = Negate
data FixP where
  wrap : P tt FixP → FixP

no-fixp : FixP → ⊥
no-fixp (wrap x) = x (wrap x)

bang : ⊥
bang = no-fixp (wrap no-fixp)

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim bang
