"""The client and server transports behind the MessageStream seam."""
