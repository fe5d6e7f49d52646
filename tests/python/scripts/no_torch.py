print("hello without torch")
