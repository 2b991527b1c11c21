"""Engine facts: which engines are installed, how they are launched, what their servers say, their build cache."""
