"""Keras's MobileNetV2 (width 0.35, 96x96, random weights, BatchNorm statistics
from a seeded batch) with full integer
quantization: int8 weights and activations calibrated on seeded random images, float
input and output (the converter's quantize/dequantize at the edges)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)


def calibrated(model, shape):
    """Every BatchNorm's statistics from one seeded batch (a fresh model normalizes with 0
    and 1, which fit no activation: its answer would not move with its input)."""
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            layer.momentum = 0.0
    model(np.random.default_rng(1).uniform(-1, 1, (8, *shape)).astype(np.float32),
          training=True)
    return model


keras_model = calibrated(tf.keras.applications.MobileNetV2(
    input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10), (96, 96, 3))


def representative_dataset():
    generator = np.random.default_rng(0)
    for _ in range(8):
        yield [generator.uniform(-1, 1, (1, 96, 96, 3)).astype(np.float32)]


converter = tf.lite.TFLiteConverter.from_keras_model(keras_model)
converter.optimizations = [tf.lite.Optimize.DEFAULT]
converter.representative_dataset = representative_dataset
converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
tflite_model = converter.convert()
