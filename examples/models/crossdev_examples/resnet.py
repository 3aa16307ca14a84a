"""A torchvision-style ResNet at random init (BasicBlock, as torchvision.models.resnet18 builds it, at a
width and depth a CPU runner can afford): convolutions with batch norm, a residual sum, max pooling,
adaptive average pooling and a linear head. No crossdev op inside: the model a user brings.

    tiny_resnet   two stages of two BasicBlocks each, 3x32x32 inputs, 10 classes, eval()

On CUDA, cuDNN runs its convolutions in TF32 by default (torch.backends.cudnn.allow_tf32 is True), which
a parity row with `numerics: deployed` sees and one in the default `parity` mode does not (docs/models.md).
"""
import torch
from torch import nn

SEED, BATCH = 0, 2


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class TinyResNet(nn.Module):
    def __init__(self, widths=(16, 32), classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(widths[0], widths[0]), BasicBlock(widths[0], widths[0]))
        self.layer2 = nn.Sequential(BasicBlock(widths[0], widths[1], stride=2), BasicBlock(widths[1], widths[1]))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[1], classes)
        for m in self.modules():  # torchvision's init
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def tiny_resnet():
    torch.manual_seed(SEED)
    return TinyResNet().eval(), (torch.randn(BATCH, 3, 32, 32),)
