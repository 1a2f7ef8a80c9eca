-- Source of data/shop.sqlite (rebuild: sqlite3 data/shop.sqlite < data/shop.sql).
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     total REAL NOT NULL, items INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Ada', 'UK'), (2, 'Grace', 'US'), (3, 'Linus', 'FI'), (4, 'Ken', 'US');
INSERT INTO orders VALUES (1, 1, 120.0, 3), (2, 2, 35.5, 1), (3, 1, 80.0, 2), (4, 3, 12.25, 1),
                          (5, 4, 99.0, 4), (6, 2, 35.5, 1);
