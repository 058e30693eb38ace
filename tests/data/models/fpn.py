"""A feature pyramid network (Lin et al., 2017) over a small strided-conv backbone, its
top-down pathway written as torchvision's `FeaturePyramidNetwork.forward` writes it: each
coarser map resized to the next finer map's size by nearest interpolation
(`F.interpolate(last_inner, size=feat_shape, mode="nearest")`) and added to that map's 1x1
lateral projection, then smoothed by a 3x3 conv. At 36x36 the backbone's maps are 18, 9 and
5 wide, so the resizes are 5 -> 9 and 9 -> 18: not whole factors."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class FPN(nn.Module):
    def __init__(self, in_channels_list=(8, 16, 32), out_channels=16):
        super().__init__()
        widths = (3,) + tuple(in_channels_list)
        self.body = nn.ModuleList(
            nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.ReLU(inplace=True))
            for cin, cout in zip(widths, widths[1:])
        )
        self.inner_blocks = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels_list)
        self.layer_blocks = nn.ModuleList(
            nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels_list
        )

    def forward(self, x):
        features = []
        for stage in self.body:
            x = stage(x)
            features.append(x)

        last_inner = self.inner_blocks[-1](features[-1])
        results = [self.layer_blocks[-1](last_inner)]
        for idx in range(len(features) - 2, -1, -1):
            inner_lateral = self.inner_blocks[idx](features[idx])
            feat_shape = inner_lateral.shape[-2:]
            inner_top_down = F.interpolate(last_inner, size=feat_shape, mode="nearest")
            last_inner = inner_lateral + inner_top_down
            results.insert(0, self.layer_blocks[idx](last_inner))
        return tuple(results)
