"""A Keras LSTM over a short sequence (the converter fuses it into TFLite's
UNIDIRECTIONAL_SEQUENCE_LSTM), then a dense head; float32."""
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
keras_model = tf.keras.Sequential([
    tf.keras.Input((12, 16), batch_size=1),
    tf.keras.layers.LSTM(32, return_sequences=False),
    tf.keras.layers.Dense(8),
])
tflite_model = tf.lite.TFLiteConverter.from_keras_model(keras_model).convert()
