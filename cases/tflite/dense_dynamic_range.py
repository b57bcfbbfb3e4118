"""A small dense network with dynamic-range quantization (int8 weights, float
activations): the converter's default optimization, without a calibration set."""
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
keras_model = tf.keras.Sequential([
    tf.keras.Input((64,), batch_size=1),
    tf.keras.layers.Dense(256, activation="relu"),
    tf.keras.layers.LayerNormalization(),
    tf.keras.layers.Dense(128, activation="gelu"),
    tf.keras.layers.Dense(10),
])
converter = tf.lite.TFLiteConverter.from_keras_model(keras_model)
converter.optimizations = [tf.lite.Optimize.DEFAULT]
tflite_model = converter.convert()
