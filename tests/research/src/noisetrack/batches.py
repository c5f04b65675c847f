import torch
from torch.utils.data import DataLoader, Dataset


class _WithIds(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.X[i], self.y[i], i


class BatchSource:
    """Wraps a feature matrix and its labels: a shuffled loader to train on, an ordered one to score."""

    def __init__(self, X, y, batch_size=None, seed=0):
        self.X = torch.as_tensor(X, dtype=torch.float32)
        self.y = torch.as_tensor(y, dtype=torch.long)
        gen = torch.Generator().manual_seed(seed)
        self.train_loader = DataLoader(_WithIds(self.X, self.y), batch_size=batch_size, shuffle=True, generator=gen)
        self.ordered_loader = DataLoader(_WithIds(self.X, self.y), batch_size=batch_size, shuffle=False)
