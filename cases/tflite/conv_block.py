"""A hand-built Keras graph of the operators mobile vision models are made of (conv,
depthwise conv, batch norm, ReLU6, pooling, concatenation, resize, dense, softmax),
random weights, converted to TFLite in float32."""
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
layers = tf.keras.layers

image = tf.keras.Input((32, 32, 3), batch_size=1)
stem = layers.ReLU(6.0)(layers.BatchNormalization()(layers.Conv2D(16, 3, strides=2,
                                                                   padding="same")(image)))
branch = layers.DepthwiseConv2D(3, padding="same", activation="relu")(stem)
branch = layers.Conv2D(16, 1)(branch)
merged = layers.Concatenate()([layers.MaxPooling2D(2)(stem), layers.AveragePooling2D(2)(branch)])
upsampled = layers.UpSampling2D(2, interpolation="bilinear")(merged)
pooled = layers.GlobalAveragePooling2D()(layers.Conv2D(8, 3, padding="valid")(upsampled))
scores = layers.Softmax()(layers.Dense(10)(layers.Reshape((8,))(pooled)))
keras_model = tf.keras.Model(image, scores)

tflite_model = tf.lite.TFLiteConverter.from_keras_model(keras_model).convert()
