"""A plugin that fails to import (see ``adk_broken.plugin``); the package itself imports fine."""
