print("coin-shop: placeholder")
