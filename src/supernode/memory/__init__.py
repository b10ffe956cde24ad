"""The global address space of a supernode (seed 003 §2.3, §4.3; docs/memory.md).

The map (:mod:`.units`, :mod:`.addrmap`, :mod:`.translation`, :mod:`.fabric`,
:mod:`.model`), changes of membership and the epoch protocol (:mod:`.membership`,
:mod:`.epoch`), the cost of coherence and placement (:mod:`.coherence`,
:mod:`.placement`), the seeded protocol simulator and its checker (:mod:`.program`,
:mod:`.channels`, :mod:`.directory`, :mod:`.sim`, :mod:`.checker`,
:mod:`.consistency`), litmus tests (:mod:`.litmus`, :mod:`.litmus_program`) and the
comparison with published figures (:mod:`.published`).
"""
