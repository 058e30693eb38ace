import torch
import torch.nn as nn


class TinyDetector(nn.Module):
    """A YOLO-style backbone: strided convs with BatchNorm and SiLU, then a 1x1 head."""

    def __init__(self, width=8, n_outputs=6):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(width),
            nn.SiLU(),
        )
        self.down = nn.Sequential(
            nn.Conv2d(width, 2 * width, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.SiLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Conv2d(2 * width, n_outputs, kernel_size=1)

    def forward(self, image):
        return self.head(self.down(self.stem(image)))
