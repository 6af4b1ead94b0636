"""A bounded map that forgets the least recently used entry: what truncation holds of recent encodings."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded map that forgets the least recently used entry."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def find(self, key: K) -> V | None:
        """The value of `key` if held (it becomes the most recently used), else None."""
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The value of `key`, computed and held when it is not."""
        value = self.find(key)
        if value is None:
            value = compute()
            self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self._size:
            self._items.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._items
