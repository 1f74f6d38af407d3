// nn.h: neural-network training (umbrella header).
//
// Modules (layers), losses, optimizers, learning-rate schedules, initializers, data loading and
// checkpoints, all built on bitlearn/autograd.h and therefore bitwise identical on every device and
// thread count. Images use the channels-last layout [N, H, W, C] throughout.
#pragma once

#include "bitlearn/autograd.h"
#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/data.h"
#include "bitlearn/nn/functional.h"
#include "bitlearn/nn/init.h"
#include "bitlearn/nn/layers.h"
#include "bitlearn/nn/loss.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"
#include "bitlearn/nn/recurrent.h"
#include "bitlearn/nn/schedule.h"
#include "bitlearn/nn/train.h"
#include "bitlearn/nn/zoo.h"
