"""The account's volumes: made, mounted into sandboxes, kept while mounted, deleted."""

from __future__ import annotations

import pytest

from paddock import AsyncPaddock, ConflictError, NotFoundError, Paddock, VolumeMount

from .conftest import User
from .support import Flavor, result


async def test_volumes_create_mount_and_delete(flavor: Flavor, client: Paddock | AsyncPaddock, user: User) -> None:
    name = f"py-data-{flavor.value}"
    volume = await result(client.volumes.create(name, size="32Mi"))
    assert (volume.name, volume.size_bytes) == (name, 32 * 2**20)
    assert volume.id in [listed.id for listed in await result(client.volumes.list())]

    writer = await result(flavor.sandbox.create(volumes=[VolumeMount(name, "/data")], **user.connection))
    try:
        await result(writer.commands.run("echo kept > /data/kept.txt"))
        with pytest.raises(ConflictError) as in_use:
            await result(client.volumes.delete(volume.id))
        assert in_use.value.code == "volume_in_use"
    finally:
        await result(writer.kill())
        await result(writer.close())

    reader = await result(
        flavor.sandbox.create(volumes=[VolumeMount(name, "/ref", read_only=True)], **user.connection)
    )
    try:
        assert (await result(reader.commands.run("cat /ref/kept.txt"))).stdout == "kept\n"
    finally:
        await result(reader.kill())
        await result(reader.close())

    await result(client.volumes.delete(volume.id))
    with pytest.raises(NotFoundError) as missing:
        await result(client.volumes.get(volume.id))
    assert missing.value.code == "volume_not_found"
