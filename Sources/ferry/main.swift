import ArgumentParser
import GRDB
import Yams
import Crypto
import Logging
print("x")
