"""simdplan.viz: show robots, environments and paths in pybullet, or render them off-screen (PNG/GIF)."""

from simdplan.viz.pybullet_viewer import Camera, PyBulletViewer, fit_camera, save_image

__all__ = ["PyBulletViewer", "Camera", "fit_camera", "save_image"]
