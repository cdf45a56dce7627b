"""The parts behind the main screen: plain objects, each made with a PartContext."""
