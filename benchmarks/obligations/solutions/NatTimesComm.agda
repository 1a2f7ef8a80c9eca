module NatTimesComm where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)
open import Data.Nat.Properties using (*-comm)

times-comm : ∀ (m n : ℕ) → m * n ≡ n * m
times-comm m n = *-comm m n
