theorem add_comm' (n m : Nat) : n + m = m + n := Nat.add_comm n m
