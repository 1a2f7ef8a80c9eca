module NatSucCong where

open import Data.Nat using (ℕ; zero; suc; _+_; _*_; _≤_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl; sym; trans; cong)

suc-cong : ∀ {m n : ℕ} → m ≡ n → suc m ≡ suc n
suc-cong p = cong suc p
